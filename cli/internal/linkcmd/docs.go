package linkcmd

import (
	"github.com/cxray/cxray/feature/fechist"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/feature/linkflap"
	"github.com/cxray/cxray/optics"
)

// The JSON documents of `link`, one type per output. Their keys are in
// alphabetical order: they replaced maps, which encoding/json writes so,
// and scripts compare the bytes (TestDocumentKeyOrder).

// Document is `link -o json`: the ports read, with LinkDown (the last
// link-down's evidence, per port) only with --counters. It lives here,
// not in feature/link, because it joins link's reports with linkflap's
// evidence and linkflap builds on link. (`link --pcie` writes
// pcielink.Document.)
type Document struct {
	Backend        string               `json:"backend"`
	Cleared        []string             `json:"cleared"`
	Device         string               `json:"device"`
	LinkDown       []*linkflap.Evidence `json:"link_down,omitempty"`
	Links          []*link.Report       `json:"links"`
	SourceRevision string               `json:"source_revision"`
	Thresholds     link.Thresholds      `json:"thresholds"`
	Verdicts       int                  `json:"verdicts"`
}

// dryRunDoc is a write the command would make and did not (--dry-run):
// --clear, --clear_histogram, --margin (with EstimateS, its duration).
type dryRunDoc struct {
	Device     string   `json:"device"`
	DryRun     bool     `json:"dry_run"`
	EstimateS  *int     `json:"estimate_s,omitempty"`
	WouldWrite []string `json:"would_write"`
}

// clearedDoc is --clear_histogram's result: the counters cleared.
type clearedDoc struct {
	Cleared []string `json:"cleared"`
	Device  string   `json:"device"`
}

// histogramDoc is `link --fec_histogram -o json`.
type histogramDoc struct {
	Device    string             `json:"device"`
	Histogram *fechist.Histogram `json:"histogram"`
}

// cableDumpDoc is `link --cable --dump -o json`: the module memory read.
type cableDumpDoc struct {
	Access string        `json:"access"`
	Device string        `json:"device"`
	Image  *optics.Image `json:"image"`
	Module int           `json:"module"`
	Port   int           `json:"port"`
}

// cableReadDoc is `link --cable --read -o json`: bytes of one page.
type cableReadDoc struct {
	ASCII  string   `json:"ascii"`
	Bank   int      `json:"bank"`
	Bytes  []string `json:"bytes"`
	Device string   `json:"device"`
	I2C    int      `json:"i2c"`
	Length int      `json:"length"`
	Module int      `json:"module"`
	Offset int      `json:"offset"`
	Page   int      `json:"page"`
	Port   int      `json:"port"`
}

// changeDoc is a link change's plan (Written false) or result: After,
// Problem and Verified are there once it was written.
type changeDoc struct {
	After       *link.Operational `json:"after,omitempty"`
	Change      *linkctl.Change   `json:"change"`
	Note        string            `json:"note,omitempty"`
	Problem     *string           `json:"problem,omitempty"`
	UndoCommand string            `json:"undo_command"`
	Verified    *[]string         `json:"verified,omitempty"`
	Written     bool              `json:"written"`
}
