"""Sphinx configuration of the course site (`make site`; tools/build_site.py prepares the sources).

The notebooks are rendered with their stored outputs by myst-nb and never executed; their
widgets arrive as static HTML (minigraph/snapshot.py). Everything the pages need ships with
the site: MathJax is copied from the jupyter-server-mathjax package, the theme's files from
sphinx-book-theme, so the site reads offline and fetches nothing from a CDN."""

project = "minigraph"
author = "the minigraph authors"
copyright = "2026, the minigraph authors (MIT licence)"

extensions = ["myst_nb"]
nb_execution_mode = "off"                       # the stored outputs are the course's own
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type", "misc.highlighting_failure"]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "sphinx_book_theme"
html_title = "minigraph: build and watch a deep-learning engine"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "use_download_button": True,
}
html_show_sourcelink = False
html_last_updated_fmt = None

# MathJax 2 from the jupyter-server-mathjax wheel, copied into _static/mathjax by the build.
# That copy has the STIX-Web fonts only (as the classic Jupyter notebook used it), so MathJax
# is told to use them and never to look for its TeX fonts.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {"tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                               "processEscapes": True, "processEnvironments": True,
                               "ignoreClass": "document", "processClass": "math|output_area"},
                   "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None,
                                "preferredFont": None},
                   "messageStyle": "none"}
html_context = {"default_mode": "light"}
