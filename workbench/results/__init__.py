"""Results: the row of a measured point, result sets, their files, the journal and saved sessions."""
