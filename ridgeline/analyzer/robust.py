"""Robust statistics shared by the analyses that flag what stands out from its peers (outlier
steps, straggler GPUs, a night outside its band): the median and the median absolute deviation
(MAD), which one wild value does not move.

``MAD_TO_SIGMA``: the MAD of a normal distribution times 1.4826 is its standard deviation, so
``k * MAD_TO_SIGMA * MAD`` reads as "k standard deviations" while staying robust.
"""

from __future__ import annotations

MAD_TO_SIGMA = 1.4826
