// no TIFF
