package prmcmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

func prmRun(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

type encoded struct {
	Name      string          `json:"name"`
	ID        uint32          `json:"id"`
	SizeBytes int             `json:"size_bytes"`
	Hex       string          `json:"hex"`
	Dwords    []string        `json:"dwords"`
	Fields    json.RawMessage `json:"fields"`
}

type decoded struct {
	Name      string          `json:"name"`
	ID        uint32          `json:"id"`
	SizeBytes int             `json:"size_bytes"`
	Fields    json.RawMessage `json:"fields"`
}

func fields(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	cmdutiltest.JSON(t, string(raw), &m)
	return m
}

// encode, then decode what it printed, from every input the decoder takes
// (arguments, --file, standard input): the same fields come back.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	for _, c := range [][]string{
		{"PAOS", "local_port=1", "admin_status=up", "ase=1"},
		{"PMAOS", "module=3", "admin_status=disabled_by_configuration", "ase=1", "e=2"},
		{"PPCNT", "local_port=2", "grp=0x12", "clr=1"},
	} {
		if err := prmRun(a, append([]string{"encode"}, c...)...); err != nil {
			t.Fatalf("encode %v: %v", c, err)
		}
		var enc encoded
		cmdutiltest.JSON(t, a.Out.String(), &enc)
		if enc.Name != c[0] || enc.SizeBytes != 4*len(enc.Dwords) || len(enc.Hex) != 2*enc.SizeBytes {
			t.Errorf("encode %v: name %q, %d bytes, %d dwords, %d hex digits", c, enc.Name, enc.SizeBytes, len(enc.Dwords), len(enc.Hex))
		}
		file := filepath.Join(t.TempDir(), "dump.txt")
		os.WriteFile(file, []byte(strings.Join(enc.Dwords, "\n")+"\n"), 0o644)
		for _, in := range []struct {
			name  string
			args  []string
			stdin string
		}{
			{"arguments", append([]string{"decode", c[0]}, enc.Dwords...), ""},
			{"one hex run", []string{"decode", c[0], enc.Hex}, ""},
			{"--file", []string{"decode", c[0], "--file", file}, ""},
			{"standard input", []string{"decode", c[0]}, strings.Join(enc.Dwords, " ")},
		} {
			a.Stdin = strings.NewReader(in.stdin)
			if err := prmRun(a, in.args...); err != nil {
				t.Errorf("%s: decode %s from %s: %v", c[0], enc.Hex, in.name, err)
				continue
			}
			var dec decoded
			cmdutiltest.JSON(t, a.Out.String(), &dec)
			if dec.Name != enc.Name || dec.ID != enc.ID || dec.SizeBytes != enc.SizeBytes {
				t.Errorf("%s from %s: %s 0x%x %d bytes, encoded %s 0x%x %d", c[0], in.name, dec.Name, dec.ID, dec.SizeBytes, enc.Name, enc.ID, enc.SizeBytes)
			}
			if diff := cmp.Diff(fields(t, enc.Fields), fields(t, dec.Fields)); diff != "" {
				t.Errorf("%s from %s: fields (-encoded +decoded):\n%s", c[0], in.name, diff)
			}
		}
	}
}

// The table of encode lists the dwords and only the fields set; decode
// --field prints that one field's value.
func TestEncodeDecodeTables(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	if err := prmRun(a, "encode", "PAOS", "local_port=1", "admin_status=down_by_configuration"); err != nil {
		t.Fatal(err)
	}
	out := a.Out.String()
	if !strings.HasPrefix(out, "PAOS, 16 bytes:\n  0x00: 0x00010200 0x00000000 0x00000000 0x00000000\nnon-zero fields:\n") {
		t.Errorf("encode table:\n%s", out)
	}
	set := strings.Split(strings.TrimSpace(out[strings.Index(out, "non-zero fields:\n")+len("non-zero fields:\n"):]), "\n")
	for i := range set {
		set[i] = strings.TrimSpace(set[i])
	}
	if diff := cmp.Diff([]string{"admin_status = down_by_configuration (2)", "local_port = 1"}, set); diff != "" {
		t.Errorf("non-zero fields (-want +got):\n%s", diff)
	}
	if err := prmRun(a, "decode", "PAOS", "0x00010200", "0x00000000", "0x00000000", "0x00000000", "--field", "admin_status"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(a.Out.String()); !strings.HasPrefix(got, "down_by_configuration") {
		t.Errorf("--field admin_status: %q, want down_by_configuration", got)
	}
	if err := prmRun(a, "decode", "PAOS", "0x00010200", "0x00000000", "0x00000000", "0x00000000", "--field", "admin_status", "--raw"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(a.Out.String()); got != "2" && got != "0x2" {
		t.Errorf("--field admin_status --raw: %q, want the number 2", got)
	}
}

// Bad bytes, names and values are exit 2 and say what to do.
func TestPrmUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	file := filepath.Join(t.TempDir(), "d.txt")
	os.WriteFile(file, []byte("0x00010002\n"), 0o644)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"decode", "NOSUCHREG", "0x0"}, "no register \"NOSUCHREG\""},
		{[]string{"decode", "PAOS", "0x00010002"}, "PAOS is 16 bytes (4 dwords); got 4 bytes (1 dwords). Paste the whole register, or add --pad"},
		{[]string{"decode", "PAOS", "0x00000000", "0x00000000", "0x00000000", "0x00000000", "0x00000000"}, "PAOS is 16 bytes (4 dwords); got 20 bytes. Is this dump of another register? Remove the extra bytes"},
		{[]string{"decode", "PAOS", "0x0001", "--file", file}, "give the bytes either as arguments or with --file, not both"},
		{[]string{"decode", "PAOS", "--file", filepath.Join(t.TempDir(), "missing")}, "missing"},
		{[]string{"decode", "PAOS", "zz", "yy"}, ""},
		{[]string{"decode", "PAOS", "0x00000000", "0x00000000", "0x00000000", "0x00000000", "--field", "no_such_field"}, "no_such_field"},
		{[]string{"encode", "PAOS", "no_such_field=1"}, "no_such_field"},
		{[]string{"encode", "PAOS", "admin_status"}, "admin_status"},
		{[]string{"encode", "PAOS", "admin_status=sideways"}, "sideways"},
		{[]string{"encode", "PAOS", "--size", "6"}, "--size 6: give a multiple of 4 of at least 16 bytes"},
		{[]string{"encode", "PAOS", "--base", "0x0001"}, "Paste the whole register"},
		{[]string{"show", "PAOS", "--path", "no_such"}, "PAOS has no field under \"no_such\"; run 'cxray prm show PAOS'"},
		{[]string{"list", "--filter", "("}, "is not a regular expression"},
		{[]string{"diff", "builtin", "builtin-ifc"}, "are not the same kind of database"},
		{[]string{"diff", "builtin", filepath.Join(t.TempDir(), "missing.adb")}, "missing.adb"},
		{[]string{"diff", "builtin", "builtin", "NOSUCHREG"}, "NOSUCHREG"},
	} {
		a.Stdin = strings.NewReader("")
		err := prmRun(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
	// An empty standard input: no bytes given.
	a.Stdin = strings.NewReader("")
	if err := prmRun(a, "decode", "PAOS"); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "no bytes given") {
		t.Errorf("empty input: %v", err)
	}
	// --pad accepts the short dump.
	if err := prmRun(a, "decode", "PAOS", "0x00010002", "--pad"); err != nil {
		t.Errorf("--pad: %v", err)
	}
}

// search is exit 1 only when nothing at all matches, in both modes.
func TestPrmSearch(t *testing.T) {
	for _, mode := range []string{"table", "json"} {
		a := cmdutiltest.New(t, mode)
		if err := prmRun(a, "search", "--no-history", "log_tx_psn_window"); err != nil {
			t.Errorf("%s: a known word: %v", mode, err)
		}
		found := a.Out.String()
		if err := prmRun(a, "search", "--no-history", "zqxjvkwpq"); !errors.Is(err, cmdutil.ErrProblem) {
			t.Errorf("%s: a word nothing has: %v, want exit 1", mode, err)
		}
		if mode == "json" {
			var r struct {
				Hits []struct {
					Kind, Name string
				} `json:"hits"`
			}
			cmdutiltest.JSON(t, found, &r)
			kinds := map[string]bool{}
			for _, h := range r.Hits {
				kinds[h.Kind] = true
			}
			if !kinds["nv_parameter"] {
				t.Errorf("log_tx_psn_window: %d hits of kinds %v; want the NV parameter among them", len(r.Hits), kinds)
			}
			cmdutiltest.JSON(t, a.Out.String(), &r)
			if len(r.Hits) != 0 {
				t.Errorf("no match: %d hits", len(r.Hits))
			}
		} else if !strings.Contains(a.Out.String(), "0 matches") {
			t.Errorf("no match table:\n%s", a.Out)
		}
	}
}

// list --filter keeps the matching registers; the count line says how
// many.
func TestPrmList(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := prmRun(a, "list", "--filter", "^pmaos$"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Registers []struct {
			Name string `json:"name"`
			ID   uint32 `json:"id"`
		} `json:"registers"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if len(r.Registers) != 1 || r.Registers[0].Name != "PMAOS" || r.Registers[0].ID != 0x5012 {
		t.Errorf("--filter ^pmaos$: %+v", r.Registers)
	}
	a.Output = "table"
	if err := prmRun(a, "list", "--filter", "^pmaos$"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Out.String(), "PMAOS  0x5012") || !strings.Contains(a.Out.String(), "\n1 registers (") {
		t.Errorf("table:\n%s", a.Out)
	}
}

// prm diff is exit 0 for a revision against itself and 1 for two that
// differ, in both modes (diff(1)'s convention).
func TestPrmDiffExitCodes(t *testing.T) {
	dir := prmhistorytest.Require(t)
	old, new := filepath.Join(dir, "hca-ext-rev0.51.adb"), filepath.Join(dir, "hca-ext-rev0.64.adb")
	for _, mode := range []string{"table", "json"} {
		a := cmdutiltest.New(t, mode)
		if err := prmRun(a, "diff", new, new); err != nil {
			t.Errorf("%s: a revision against itself: %v", mode, err)
		}
		if err := prmRun(a, "diff", old, new); !errors.Is(err, cmdutil.ErrProblem) || a.Out.Len() == 0 {
			t.Errorf("%s: Rev 0.51 against 0.64: %v, want exit 1 with a report", mode, err)
		}
	}
}

// show -o json gives a field's place and enum as the table does; --path
// narrows to the fields under it.
func TestPrmShow(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := prmRun(a, "show", "PAOS", "--path", "admin_status"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Name      string      `json:"name"`
		ID        *uint32     `json:"id"`
		SizeBytes int         `json:"size_bytes"`
		Fields    []showField `json:"fields"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if r.Name != "PAOS" || r.ID == nil || *r.ID != 0x5006 || r.SizeBytes != 16 || len(r.Fields) != 1 {
		t.Fatalf("show PAOS --path admin_status: %+v", r)
	}
	f := r.Fields[0]
	// A 4-bit field whose names are the ones encode and decode use above.
	if f.Path != "admin_status" || f.BitWidth != 4 || f.Enum["up"] != 1 || f.Enum["down_by_configuration"] != 2 {
		t.Errorf("admin_status %+v", f)
	}
	a.Output = "table"
	if err := prmRun(a, "show", "PAOS", "--no-diagram"); err != nil {
		t.Fatal(err)
	}
	plain := a.Out.String()
	if err := prmRun(a, "show", "PAOS"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Out.String(), plain) || len(a.Out.String()) <= len(plain) || !strings.Contains(plain, "admin_status") {
		t.Errorf("the diagram should follow the table, --no-diagram leave it out:\n%s", a.Out)
	}

	// A command shows both mailboxes.
	a.Output = "json"
	if err := prmRun(a, "show", "QUERY_HCA_CAP"); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Opcode int    `json:"opcode"`
		In     *struct {
			Fields []showField `json:"fields"`
		} `json:"in"`
		Out *struct {
			Fields []showField `json:"fields"`
		} `json:"out"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &c)
	if c.Kind != "command" || c.Opcode != 0x100 || c.In == nil || c.Out == nil || len(c.In.Fields) == 0 {
		t.Errorf("QUERY_HCA_CAP: kind %q opcode 0x%x in %v out %v", c.Kind, c.Opcode, c.In != nil, c.Out != nil)
	}
	if err := prmRun(a, "show", "QUERY_HCA_CAP", "--path", "no_such"); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "has no field under \"no_such\" in its mailboxes") {
		t.Errorf("command --path no_such: %v", err)
	}
}

// info counts what list lists.
func TestPrmInfo(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := prmRun(a, "info"); err != nil {
		t.Fatal(err)
	}
	var info struct {
		Revision  string `json:"revision"`
		Registers int    `json:"registers"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &info)
	if err := prmRun(a, "list"); err != nil {
		t.Fatal(err)
	}
	var l struct {
		SourceRevision string            `json:"source_revision"`
		Registers      []json.RawMessage `json:"registers"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &l)
	if info.Revision == "" || info.Revision != l.SourceRevision || info.Registers != len(l.Registers) {
		t.Errorf("info: %s, %d registers; list: %s, %d", info.Revision, info.Registers, l.SourceRevision, len(l.Registers))
	}
}
