package health

// Document is `cxray health -o json`: a report per function, and the
// revision of the register database that decoded them. The fields are in
// key order, as the map it replaced was written, so the output is
// unchanged (cli/testdata/golden).
type Document struct {
	Devices        []*Report `json:"devices"`
	SourceRevision string    `json:"source_revision"`
}
