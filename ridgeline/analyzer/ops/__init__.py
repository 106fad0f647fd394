"""PyTorch ops on the roofline (issue 30): each GPU kernel tied to the CPU op that launched it
(:mod:`.attribute`), FLOPs and bytes modelled from the op's recorded shapes (:mod:`.models`), and
op groups placed under the GPU's roofs (:mod:`.groups`). Reads the TIMELINE and HOST_API tables only."""
