"""Chapter 02 has no reference answers: its judges decide by an order's properties and by
minigraph's own ``Graph.forward``, so they hold none and ship (``judges/ch02.py``)."""
