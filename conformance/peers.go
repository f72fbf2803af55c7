package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// FlintQuery is `mstflint -d DEV q` read back: label -> value, as printed
// ("FW Version" -> "28.41.2000"). Labels printed twice keep the first
// value. For the UID table rows (Base GUID, Base MAC, Orig Base MAC) the
// value is the UID column alone; GuidsNumber is dropped.
type FlintQuery map[string]string

var flintLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9 ()/._-]*?):\s+(.*?)\s*$`)

// ParseFlintQuery reads mstflint's query output. It fails when the output
// has no FW Version line (mstflint printed an error instead).
func ParseFlintQuery(out string) (FlintQuery, error) {
	q := FlintQuery{}
	for _, line := range strings.Split(out, "\n") {
		m := flintLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		label, val := m[1], m[2]
		switch label {
		case "Base GUID", "Base MAC", "Orig Base GUID", "Orig Base MAC":
			if f := strings.Fields(val); len(f) > 0 {
				val = f[0]
			}
		}
		if _, dup := q[label]; !dup {
			q[label] = val
		}
	}
	if q["FW Version"] == "" {
		return nil, fmt.Errorf("mstflint q printed no FW Version:\n%s", out)
	}
	return q, nil
}

// NormalizeHexID turns a MAC or GUID in any of the usual spellings
// (b83fd2a1b2c0, b8:3f:d2:a1:b2:c0, b83f:d203:00a1:b2c0, 0x...) into plain
// lower-case hex digits, so the tools' spellings compare equal.
func NormalizeHexID(s string) string {
	s = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	return strings.NewReplacer(":", "", "-", "", ".", "").Replace(s)
}

// MstlinkOutput is `mstlink --json` read back: section -> label -> value.
// Values are strings, or for speed lists the mask with its names.
type MstlinkOutput map[string]map[string]MstlinkValue

// MstlinkValue is one label's value.
type MstlinkValue struct {
	Text   string   // plain values
	Mask   string   // "0x00013ff2" for speed lists
	Values []string // the names of a list (speeds, per-lane values)
}

func (v *MstlinkValue) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &v.Text)
	}
	var o struct {
		Mask   string   `json:"mask"`
		Values []string `json:"values"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	v.Mask, v.Values = o.Mask, o.Values
	return nil
}

// MaskValue is the list's mask as a number.
func (v MstlinkValue) MaskValue() (uint64, error) {
	return strconv.ParseUint(v.Mask, 0, 32)
}

// ParseMstlinkJSON reads `mstlink --json`; a status other than success is
// an error carrying mstlink's message.
func ParseMstlinkJSON(out []byte) (MstlinkOutput, error) {
	var doc struct {
		Result struct {
			Output MstlinkOutput `json:"output"`
		} `json:"result"`
		Status struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("mstlink --json: %v:\n%s", err, out)
	}
	if doc.Status.Code != 0 {
		return nil, fmt.Errorf("mstlink --json: status %d: %s", doc.Status.Code, doc.Status.Message)
	}
	if len(doc.Result.Output) == 0 {
		return nil, fmt.Errorf("mstlink --json printed no sections:\n%s", out)
	}
	return doc.Result.Output, nil
}
