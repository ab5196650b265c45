"""pytest side of the HTML report (``--jeval-report``)."""
