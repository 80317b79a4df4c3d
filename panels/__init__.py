"""Qt widgets of the workbench window; the only package (with workbench.app) that imports Qt."""
