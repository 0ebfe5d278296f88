"""What pages and the API both need from a request: reading an upload's files and fields."""
