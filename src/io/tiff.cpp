// TIFF codec: filled in by the io work
