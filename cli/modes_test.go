package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExitCodesInBothModes runs every command on the same inputs as a
// table and with -o json: the exit code is the same in both, and in JSON
// mode standard output is JSON (one document, or one per line for
// monitor), an error included.
func TestExitCodesInBothModes(t *testing.T) {
	two := "emu:../examples/two-adapters.yaml"
	cases := [][]string{
		{"version"},
		{"prm", "info"},
		{"prm", "list", "--filter", "^PAO"},
		{"prm", "show", "PAOS"},
		{"prm", "show", "NOSUCHREG"},
		{"prm", "search", "temperature"},
		{"prm", "search", "zzzqqqxxx"},
		{"prm", "decode", "PAOS", "0x00010101", "0", "0", "0"},
		{"prm", "decode", "PAOS", "zz"},
		{"prm", "encode", "PAOS", "local_port=1", "admin_status=up"},
		{"prm", "encode", "PAOS", "nosuchfield=1"},
		{"status", "-d", two},
		{"status", "-d", "emu:../examples/troubled.yaml"},
		{"status", "-d", "0000:99:00.0"},
		{"reg", "get", "MGIR", "-d", "emu"},
		{"reg", "get", "NOSUCH", "-d", "emu"},
		{"reg", "get", "MGIR", "-d", "emu:../examples/semaphore-held.yaml", "--timeout", "1s"},
		{"reg", "set", "PAOS", "admin_status=up", "ase=1", "-d", "emu", "--dry-run"},
		{"reg", "list", "-d", "emu", "--filter", "^MG"},
		{"health", "-d", "emu"},
		{"health", "-d", two, "--all", "--interval", "1ms"},
		{"health"},
		{"link", "--pcie", "-d", "emu:../examples/pcie-degraded.yaml"},
		{"link", "--pcie", "-d", "emu", "--interval", "1ms"},
		{"link", "--pcie", "-d", "emu", "--port", "2"},
		{"module", "-d", "emu"},
		{"module", "-d", two + "@0000:04:00.1"},
		{"module", "-d", "emu", "--port", "9"},
		{"roce", "status", "-d", "emu", "--interval", "1ms"},
		{"roce", "advise", "--rate", "400G", "--rtt", "8us"},
		{"roce", "advise", "--rate", "400G", "--rtt", "80us", "-d", "emu"},
		{"roce", "advise", "--rate", "nonsense", "--rtt", "8us"},
		{"config", "query", "-d", "emu"},
		{"config", "show-params", "--filter", "SRIOV"},
		{"config", "set", "-d", "emu", "NOSUCHPARAM=1", "--yes"},
		{"config", "recover", "-d", "emu"},
		{"monitor", "-d", two, "--all", "--count", "1", "-i", "1ms"},
		{"monitor", "-d", "emu", "--what", "tmp", "--count", "1"},
		{"monitor", "-d", two, "--count", "1", "--alert", "temp.asic_c > 1"},
		{"snapshot", "-d", "emu", "--profile", "minimal"},
		{"emu", "profiles"},
		{"nosuchcommand"},
	}
	for _, args := range cases {
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		_, errTable, codeTable := cli(t, "", args...)
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		out, errJSON, codeJSON := cli(t, "", append(append([]string{}, args...), "-o", "json")...)
		if codeTable != codeJSON {
			t.Errorf("%v: exit %d as a table, %d with -o json\ntable stderr: %s\njson stderr: %s", args, codeTable, codeJSON, errTable, errJSON)
		}
		if !isJSONOutput(out) {
			t.Errorf("%v -o json: standard output is not JSON:\n%s", args, out)
		}
		if codeJSON >= 2 {
			var e struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
			}
			last := strings.TrimSpace(out)
			if i := strings.LastIndexByte(last, '\n'); i >= 0 {
				last = last[i+1:]
			}
			if err := json.Unmarshal([]byte(last), &e); (err != nil || e.Error == "" || e.ExitCode != codeJSON) && !strings.Contains(out, `"error"`) {
				t.Errorf("%v -o json: exit %d without a JSON error object: %s", args, codeJSON, out)
			}
		}
	}
}

// isJSONOutput says s is one JSON document or JSON lines.
func isJSONOutput(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if json.Valid([]byte(s)) {
		return true
	}
	for _, l := range strings.Split(s, "\n") {
		if !json.Valid([]byte(l)) {
			return false
		}
	}
	return true
}
