package modules

// The documents of `cxray module -o json`. Their fields are in key order,
// as the maps they replaced were written, so the output is unchanged
// (cli/testdata/golden).

// Document is the modules read from a device: a report per port, the
// adapter's firmware, and the number of verdicts over all of them.
type Document struct {
	AdapterFirmware string    `json:"adapter_firmware"`
	Device          string    `json:"device"`
	Modules         []*Report `json:"modules"`
	SourceRevision  string    `json:"source_revision"`
	Verdicts        int       `json:"verdicts"`
}

// FileDocument is a module EEPROM dump decoded offline (--file): its
// format as read, notes on what was read, and the one module's report.
type FileDocument struct {
	File     string    `json:"file"`
	Format   string    `json:"format"`
	Modules  []*Report `json:"modules"`
	Notes    []string  `json:"notes"`
	Verdicts int       `json:"verdicts"`
}
