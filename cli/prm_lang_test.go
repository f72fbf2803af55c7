package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

// prm search answers in both output modes with the same exit code: 0 when
// anything matches, 1 only when nothing at all does.
func TestPrmSearchEverything(t *testing.T) {
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	for _, c := range []struct {
		q, want string
		code    int
	}{
		{"log_tx_psn_window", "LOG_TX_PSN_WINDOW", 0},
		{"MODULE_TEMP", "page_data.pddr_module_info_ext.temperature", 0},
		{"module_temp", "cxray prm show PDDR --path page_data.pddr_module_info_ext", 0},
		{"MTPM", "did you mean: MTMP", 0},
		{"zzzqqq", "0 matches", 1},
	} {
		out, errs, code := cli(t, "", "--adb", "builtin", "prm", "search", "--no-history", c.q)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("search %s: exit %d, want %d, lacks %q:\n%s%s", c.q, code, c.code, c.want, out, errs)
		}
		jout, _, jcode := cli(t, "", "--adb", "builtin", "prm", "search", "--no-history", c.q, "-o", "json")
		if jcode != code {
			t.Errorf("search %s: exit %d in JSON, %d as a table", c.q, jcode, code)
		}
		var v struct {
			Hits        []map[string]any `json:"hits"`
			Suggestions []string         `json:"suggestions"`
		}
		if err := json.Unmarshal([]byte(jout), &v); err != nil {
			t.Fatalf("%s: %v\n%s", c.q, err, jout)
		}
		if (len(v.Hits)+len(v.Suggestions) > 0) != (c.code == 0) {
			t.Errorf("%s: JSON %s", c.q, jout)
		}
	}
}

// Names that are not registers say what they are.
func TestPrmNotARegister(t *testing.T) {
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	for args, want := range map[string]string{
		"prm show NODE_GUID":         "node_guid is a field of PGUID (cxray prm show PGUID --path node_guid)",
		"prm show LOG_TX_PSN_WINDOW": "LOG_TX_PSN_WINDOW is an NV configuration parameter",
		"prm decode MTPM 0":          "did you mean MTMP,",
	} {
		_, errs, code := cli(t, "", append([]string{"--adb", "builtin"}, strings.Fields(args)...)...)
		if code != cmdutil.ExitUsage || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, %q; want %q", args, code, errs, want)
		}
	}
}

// prm decode reads mstreg's and cxray's outputs as saved from a terminal;
// --field of a structure prints its fields, never "0x".
func TestPrmDecodePasted(t *testing.T) {
	for _, f := range []string{"mstreg-MGIR.id.txt", "mstreg-MGIR.named.txt", "cxray-MGIR.get.txt", "cxray-MGIR.raw.txt", "cxray-MGIR.json"} {
		data, err := os.ReadFile("../feature/hexdump/testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		out, errs, code := cli(t, string(data), "--adb", "builtin", "prm", "decode", "MGIR", "--field", "fw_info")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		for _, want := range []string{"fw_info.date                2023-10-05 (0x10052023)", "fw_info.hour                12:34 (0x1234)", `fw_info.psid                "MT_0000000834"`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: lacks %q:\n%s", f, want, out)
			}
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) < 2 || f[1] == "0x" {
				t.Errorf("a bare value line: %q", l)
			}
		}
	}
	// The dump says which register it is.
	data, _ := os.ReadFile("../feature/hexdump/testdata/cxray-MTMP.get.txt")
	_, errs, code := cli(t, string(data), "--adb", "builtin", "prm", "decode", "MGIR")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "names register MTMP, not MGIR") {
		t.Errorf("wrong register: %d %s", code, errs)
	}
	// A gap is zero-filled with a note on stderr.
	out, errs, code := cli(t, "0x00000004 | 0x00000196\n", "--adb", "builtin", "prm", "decode", "MTMP", "--pad", "--field", "temperature")
	if code != 0 || !strings.Contains(errs, "bytes 0x0..0x3 are not in the dump") || !strings.Contains(out, "= 50.75 °C") {
		t.Errorf("gap: %d %q %q", code, out, errs)
	}
}
