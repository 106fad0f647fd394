"""The kernel job: every launch on the roofline (roofline), the GPU catalogue and its roofs (gpus,
archrates, archtable), what a kernel is (families, family_literals, regex_literals, workload),
launch- vs stall-bound latency (latency), which GPU a run is about (devices), what-if projections
(whatif)."""
