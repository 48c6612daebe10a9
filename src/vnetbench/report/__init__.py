"""Reports: HTML pages and figures made from the store."""
