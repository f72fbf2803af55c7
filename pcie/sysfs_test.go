package pcie

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kernelCor is aer_dev_correctable as drivers/pci/pcie/aer.c prints it.
const kernelCor = `RxErr 3
BadTLP 12
BadDLLP 0
Rollover 0
Timeout 1
NonFatalErr 0
CorrIntErr 0
HeaderOF 0
TOTAL_ERR_COR 16
`

func TestParseAERCounts(t *testing.T) {
	want := &AERCounts{Counts: map[string]uint64{"RxErr": 3, "BadTLP": 12, "BadDLLP": 0, "Rollover": 0, "Timeout": 1,
		"NonFatalErr": 0, "CorrIntErr": 0, "HeaderOF": 0}, Total: 16}
	for name, text := range map[string]string{
		"kernel":   kernelCor,
		"crlf":     strings.ReplaceAll(kernelCor, "\n", "\r\n"),
		"indented": "  " + strings.ReplaceAll(kernelCor, "\n", "\n    "),
	} {
		got, err := ParseAERCounts(text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	for name, text := range map[string]string{
		"cut short":       kernelCor[:40],
		"empty":           "",
		"not a number":    "RxErr x\nTOTAL_ERR_COR 0\n",
		"three words":     "Rx Err 1\nTOTAL_ERR_COR 1\n",
		"twice":           "RxErr 1\nRxErr 1\nTOTAL_ERR_COR 2\n",
		"after the total": "TOTAL_ERR_COR 1\nRxErr 1\n",
		"two totals":      "TOTAL_ERR_COR 1\nTOTAL_ERR_COR 1\n",
		"negative":        "RxErr -1\nTOTAL_ERR_COR 0\n",
	} {
		if got, err := ParseAERCounts(text); err == nil {
			t.Errorf("%s: parsed as %+v", name, got)
		}
	}
}

func TestFormatAERCounts(t *testing.T) {
	text := FormatAERCounts(map[int]uint64{0: 3, 6: 12, 12: 1}, CorrectableNames, "TOTAL_ERR_COR")
	if text != kernelCor {
		t.Errorf("formatted:\n%s\nwant:\n%s", text, kernelCor)
	}
	// An unnamed bit shows only when it counted.
	text = FormatAERCounts(map[int]uint64{3: 2}, CorrectableNames, "TOTAL_ERR_COR")
	c, err := ParseAERCounts(text)
	if err != nil || c.Counts["bit3"] != 2 || c.Total != 2 {
		t.Errorf("unnamed bit: %+v, %v\n%s", c, err, text)
	}
	if _, ok := c.Counts["bit1"]; ok {
		t.Error("an unnamed bit that never counted is listed")
	}
}

func TestParseHostView(t *testing.T) {
	files := map[string]string{
		AttrCurrentSpeed: "32.0 GT/s PCIe\n", AttrMaxSpeed: "32.0 GT/s PCIe\n",
		AttrCurrentWidth: "8\n", AttrMaxWidth: "16\n",
		AttrAERCor:      kernelCor,
		AttrAERNonFatal: FormatAERCounts(nil, UncorrectableNames, "TOTAL_ERR_NONFATAL"),
		AttrAERFatal:    "Undefined 0\nDLP 0\n", // cut short
	}
	v := ParseHostView("0000:c1:00.0", func(n string) (string, bool) { s, ok := files[n]; return s, ok })
	if v.Current != (Link{Gen5, 8}) || v.Max != (Link{Gen5, 16}) {
		t.Errorf("links: %+v %+v", v.Current, v.Max)
	}
	if v.Correctable == nil || v.Correctable.Total != 16 || v.NonFatal == nil || v.NonFatal.Total != 0 {
		t.Errorf("counts: %+v %+v", v.Correctable, v.NonFatal)
	}
	if v.Fatal != nil || len(v.Problems) != 1 || !strings.HasPrefix(v.Problems[0], AttrAERFatal) {
		t.Errorf("a cut file: fatal %+v, problems %q", v.Fatal, v.Problems)
	}
	// An old kernel: the speeds in the old form, no AER files.
	old := map[string]string{AttrCurrentSpeed: "16 GT/s\n", AttrMaxSpeed: "16 GT/s\n", AttrCurrentWidth: "16\n", AttrMaxWidth: "16\n"}
	v = ParseHostView("0000:03:00.0", func(n string) (string, bool) { s, ok := old[n]; return s, ok })
	if v.Current != (Link{Gen4, 16}) || len(v.Missing) != 3 || len(v.Problems) != 0 {
		t.Errorf("old kernel: %+v", v)
	}
}
