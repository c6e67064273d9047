package collection

// DefaultFile is the collection the TUI's t key saves a call into when mcpi
// connect is given no --collection: in the working directory.
const DefaultFile = "mcpi-collection.yaml"
