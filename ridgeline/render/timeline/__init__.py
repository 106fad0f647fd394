"""Views of the timeline job: post-mortem sections in text and HTML (postmortem, postmortem_html),
steps and fusion (steps, steps_html), communication and ranks (comm), the busy/idle figure (plot)."""
