"""The HTML screens: one module per screen, with its URLs, forms and presenters."""
