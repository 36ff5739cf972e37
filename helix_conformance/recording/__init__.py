"""Recording live provider traffic into cassettes, with nothing secret ever written (issue #6)."""
