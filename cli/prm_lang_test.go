package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/internal/prmhistory"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// prm search answers in both output modes with the same exit code: 0 when
// anything matches, 1 when nothing does (a "did you mean" is no match).
func TestPrmSearchEverything(t *testing.T) {
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	for _, c := range []struct {
		q, want string
		code    int
	}{
		{"log_tx_psn_window", "LOG_TX_PSN_WINDOW", 0},
		{"MODULE_TEMP", "page_data.pddr_module_info_ext.temperature", 0},
		{"module_temp", "cxray prm show PDDR --path page_data.pddr_module_info_ext", 0},
		{"MTPM", "did you mean: MTMP", 1},
		{"log_rx_psn_window", "did you mean: LOG_TX_PSN_WINDOW", 1},
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
		if (len(v.Hits) > 0) != (c.code == 0) {
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

// A renamed field is found across the revision that dropped it, with the
// history folder from --history or $CXRAY_PRM_HISTORY only (never the
// build machine's source tree); without it, a suggestion is exit 1 and
// the output says how to add the history.
func TestPrmSearchRenameHistory(t *testing.T) {
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	dir := prmhistorytest.Require(t)
	t.Setenv(prmhistory.Env, "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	adb := filepath.Join(dir, "hca-ext-rev0.64.adb")
	out, errs, code := cli(t, "", "--adb", adb, "prm", "search", "last_ber_mantissa")
	if code != 1 || !strings.Contains(out, "did you mean") || !strings.Contains(out, "--history DIR") {
		t.Errorf("without history: exit %d (want 1)\n%s%s", code, out, errs)
	}
	renamed := "renamed in Rev 0.61 to page_data.pddr_link_down_info_page_ext.last_raw_ber_coef"
	for _, args := range [][]string{{"--history", dir}, {"-o", "json", "--history", dir}, {"env"}} {
		if args[0] == "env" {
			t.Setenv(prmhistory.Env, dir)
			args = nil
		}
		out, errs, code := cli(t, "", append([]string{"--adb", adb, "prm", "search", "last_ber_mantissa"}, args...)...)
		if code != 0 || !strings.Contains(out, renamed) || !strings.Contains(out, "hca-ext-rev0.61.adb") {
			t.Errorf("%v: exit %d, lacks %q\n%s%s", args, code, renamed, out, errs)
		}
	}
	if _, errs, code := cli(t, "", "prm", "search", "x", "--history", t.TempDir()); code != 2 || !strings.Contains(errs, "no PRM database") {
		t.Errorf("--history of an empty folder: exit %d %s", code, errs)
	}
	// The folder is documented where the user looks.
	if out, _, _ := cli(t, "", "prm", "search", "--help"); !strings.Contains(out, "--history") || !strings.Contains(out, prmhistory.Env) {
		t.Errorf("help lacks the history folder:\n%s", out)
	}
}

// A name that is nothing by itself points at the register that holds its
// words and at the search, not at a dead end (with descriptions: an ADB).
func TestPrmShowPointsAtHolders(t *testing.T) {
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	adb := filepath.Join(prmhistorytest.Require(t), "hca-ext-rev0.57.adb")
	for args, want := range map[string][]string{
		"prm show SENSOR_TEMP":     {"its words are in MTMP temperature (cxray prm show MTMP --path temperature)", "'cxray prm search SENSOR_TEMP' lists all"},
		"prm decode MODULE_TEMP 0": {"its words are in PDDR temperature (cxray prm show PDDR --path page_data.pddr_module_info_ext)"},
	} {
		_, errs, code := cli(t, "", append([]string{"--adb", adb}, strings.Fields(args)...)...)
		for _, w := range want {
			if code != cmdutil.ExitUsage || !strings.Contains(errs, w) {
				t.Errorf("%s: exit %d, %q; want %q", args, code, errs, w)
			}
		}
	}
}

// prm encode refuses a number outside an enum as reg set does (exit 2,
// both modes); --raw encodes it.
func TestPrmEncodeEnumValues(t *testing.T) {
	for _, mode := range []string{"table", "json"} {
		_, errs, code := cli(t, "", "--adb", "builtin", "prm", "encode", "PAOS", "admin_status=9", "-o", mode)
		if code != cmdutil.ExitUsage || !strings.Contains(errs, "PAOS.admin_status=9: not one of its values (up=1, down_by_configuration=2") {
			t.Errorf("%s: exit %d %s", mode, code, errs)
		}
	}
	out, errs, code := cli(t, "", "--adb", "builtin", "prm", "encode", "PAOS", "admin_status=9", "--raw")
	if code != 0 || !strings.Contains(out, "0x00: 0x00000900 ") {
		t.Errorf("--raw: exit %d %s%s", code, out, errs)
	}
}
