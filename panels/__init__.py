"""The workbench window (``panels.window``) and its Qt widgets: the only package that imports Qt."""
