package explain

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// mlxlink / mstlink output: section titles ("Operational Info",
// "Troubleshooting Info", ...) over a line of dashes, then "Label : value"
// rows (mstflint mlxlink_commander.cpp), and its --json form
// {"result":{"output":{SECTION:{LABEL:VALUE}}}}.

var mlxlinkSections = []string{"Operational Info", "Supported Info", "Troubleshooting Info", "Tool Information", "Module Info",
	"Physical Counters and BER Info", "Test Mode Info", "BER Monitor Info", "External PHY Info", "PCIe Operational (Enabled) Info",
	"Device Info", "Valid PCIe Links", "Errors Info", "EYE Opening Info", "Serdes Tx parameters"}

var mlxlinkKVRE = lazyre.New(`^\s*([A-Za-z][^:]*?)\s+:\s*(.*)$`)

func isMlxlinkSection(t string) bool {
	for _, s := range mlxlinkSections {
		if strings.EqualFold(t, s) {
			return true
		}
	}
	return false
}

func init() {
	register(KindMlxlink, &kind{
		title: "mlxlink/mstlink",
		anchor: func(ls []string, i int) bool {
			return isMlxlinkSection(trimmed(ls[i])) && i+1 < len(ls) && strings.Trim(trimmed(ls[i+1]), "-") == ""
		},
		belongs: func(l string) bool {
			t := trimmed(l)
			return mlxlinkKVRE.MatchString(l) || isMlxlinkSection(t) || strings.Trim(t, "-") == "" || indented(l)
		},
		read:     readMlxlink,
		commands: [][]string{{"mlxlink*"}, {"mstlink"}},
	})
}

func readMlxlink(p *Part, dbs Databases) {
	kv := map[string]map[string]string{}
	text := strings.TrimSpace(joinLines(p.text))
	if strings.HasPrefix(text, "{") {
		p.Title = "mlxlink --json"
		var doc struct {
			Status map[string]any                             `json:"status"`
			Result struct{ Output map[string]map[string]any } `json:"result"`
		}
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			p.Error = "not valid JSON (cut short?): " + err.Error()
			p.Partial = true
			return
		}
		for sec, m := range doc.Result.Output {
			kv[sec] = map[string]string{}
			for k, v := range m {
				kv[sec][k] = jsonText(v)
			}
		}
	} else {
		sec := ""
		for _, l := range p.text {
			t := trimmed(l)
			if isMlxlinkSection(t) {
				sec = t
				kv[sec] = map[string]string{}
				continue
			}
			if m := mlxlinkKVRE.FindStringSubmatch(l); m != nil && sec != "" {
				kv[sec][strings.TrimSpace(m[1])] = strings.TrimSpace(m[2])
			}
		}
	}
	if len(kv) == 0 {
		p.Error = "no section with rows"
		return
	}
	get := func(sec, k string) string {
		for s, m := range kv {
			if strings.EqualFold(s, sec) {
				for kk, v := range m {
					if strings.EqualFold(kk, k) {
						return v
					}
				}
			}
		}
		return ""
	}
	op := "Operational Info"
	for _, k := range []string{"State", "Physical state", "Speed", "Width", "FEC", "Loopback Mode", "Auto Negotiation"} {
		p.fact(k, get(op, k))
	}
	ts := "Troubleshooting Info"
	p.fact("Status Opcode", get(ts, "Status Opcode"))
	p.fact("Recommendation", get(ts, "Recommendation"))
	ber := "Physical Counters and BER Info"
	for _, k := range []string{"Raw Physical BER", "Effective Physical BER", "Effective Physical Errors", "Link Down Counter", "Link Error Recovery Counter"} {
		p.fact(k, get(ber, k))
	}
	var secs []string
	for s := range kv {
		secs = append(secs, s)
	}
	sort.Strings(secs)
	p.fact("sections", strings.Join(secs, ", "))
	if st := get(op, "State"); st != "" && !strings.EqualFold(st, "Active") {
		rec := get(ts, "Recommendation")
		p.add(Finding{Severity: SevProblem, Category: CatHardware, What: fmt.Sprintf("the link is not up (State %s, physical state %s)", st, cmpOr(get(op, "Physical state"), "not shown")),
			Next: cmpOr(rec, "check the cable, module and peer; cxray link -d DEV gives the firmware's reason")})
	} else if code := get(ts, "Status Opcode"); code != "" && code != "0" && !strings.EqualFold(code, "N/A") {
		p.add(Finding{Severity: SevWarning, Category: CatHardware, What: "the firmware's troubleshooting status is " + code + ": " + get(ts, "Status Message"),
			Next: cmpOr(get(ts, "Recommendation"), "see cxray link -d DEV")})
	}
	if e := get(ber, "Effective Physical BER"); e != "" {
		if v, err := strconv.ParseFloat(strings.TrimSpace(strings.Replace(e, "E", "e", 1)), 64); err == nil && v > 1e-12 {
			p.add(Finding{Severity: SevWarning, Category: CatHardware, What: "effective BER " + e + " (after FEC) is above 1E-12: errors reach the traffic",
				Next: "clean or replace the fibre/cable and module; check both ends (cxray link -d DEV --counters)"})
		}
	}
	if n, err := strconv.Atoi(get(ber, "Link Down Counter")); err == nil && n > 0 {
		p.add(Finding{Severity: SevInfo, Category: CatHardware, What: fmt.Sprintf("the link went down %d time(s) since the counters were cleared", n)})
	}
	readMlxlinkEye(p, kv)
	p.Data = kv
}

// jsonText flattens mlxlink's JSON values: strings, numbers, and
// {"values": [...]} objects.
func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any:
		if vs, ok := x["values"]; ok {
			return jsonText(vs)
		}
		b, _ := json.Marshal(x)
		return string(b)
	case []any:
		var s []string
		for _, e := range x {
			s = append(s, jsonText(e))
		}
		return strings.Join(s, ",")
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
