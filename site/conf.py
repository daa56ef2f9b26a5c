"""Sphinx configuration of the course site (`make site`; tools/build_site.py prepares the sources).

The notebooks are rendered with their stored outputs by myst-nb and never executed; their
widgets arrive as static HTML (minigraph/snapshot.py). Everything the pages need ships with
the site: MathJax is copied from the django-static-mathjax package, the theme's files from
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
templates_path = ["_templates"]                 # the theme's search button, named by its text
html_css_files = ["course.css"]
html_favicon = "_static/favicon.svg"           # minigraph's three node kinds: input, parameter, op
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "use_download_button": True,
}
html_show_sourcelink = False
html_last_updated_fmt = None

# MathJax 3 from the django-static-mathjax wheel (MathJax's own files, no Django needed): its
# one-file build with every TeX extension and SVG output, which needs no web fonts. The build
# copies it into _static/mathjax/.
mathjax_path = "mathjax/tex-svg-full.js"
html_context = {"default_mode": "light"}
