"""Views without Qt: chart specs, the matplotlib renderer, palette, comparisons, summaries and reports."""
