"""Compressed adjacency of edge tables at exact table states (`csr.Csr`), the structure
Cypher traversals and graph algorithms run on."""
