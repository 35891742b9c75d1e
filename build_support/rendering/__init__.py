"""What the build does to a page after its Markdown is rendered.

- ``page_cache``: a page's rendered HTML (Material's Jinja templates, the whole navigation
  included) reused from the store while nothing that feeds it changed.
"""
