package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

// Every verb builds the command it is keyed by, so a run that names it
// gets it (rootFor) and no verb is missing from the lazy table.
func TestVerbNames(t *testing.T) {
	a := newApp(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{})
	seen := map[string]bool{}
	for _, v := range verbs {
		c := v.build(a)
		if c.Name() != v.name || len(c.Aliases) > 0 {
			t.Errorf("verb %q builds %q (aliases %q): key it by its name; aliases need rootFor to know them", v.name, c.Name(), c.Aliases)
		}
		if seen[v.name] {
			t.Errorf("verb %q is listed twice", v.name)
		}
		seen[v.name] = true
	}
}

func TestNamedVerb(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "version"},
		{[]string{"-o", "json", "version"}, "version"},
		{[]string{"-ojson", "reg", "get"}, "reg"},
		{[]string{"--output=json", "--adb", "x.adb", "prm", "show"}, "prm"},
		{[]string{"--adb=builtin", "link", "-d", "emu"}, "link"},
		{[]string{"help", "reg"}, "help"},
		{[]string{"--help"}, ""},
		{[]string{"-h", "version"}, ""},
		{[]string{"-d", "emu", "status"}, ""},
		{[]string{"--", "version"}, ""},
		{[]string{"-o"}, ""},
		{nil, ""},
	} {
		if got := namedVerb(c.args); got != c.want {
			t.Errorf("namedVerb(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// A run that builds only the verb it names prints what the whole tree
// prints, with the same exit code: every command's help (so every flag,
// the global flags and the sub-commands), the root's help, help through
// `cxray help X`, an unknown verb's suggestion and an unknown flag, in
// both output modes.
func TestLazyRootSameAsWhole(t *testing.T) {
	whole := func(args []string) (string, string, int) {
		var out, errs bytes.Buffer
		a := newApp(context.Background(), strings.NewReader(""), &out, &errs)
		root := rootCmd(a)
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(&errs)
		err := root.Execute()
		code := cmdutil.ExitOK
		if err != nil {
			code = -1 // compared by its text below
			errs.WriteString("error: " + err.Error())
		}
		return out.String(), errs.String(), code
	}
	lazy := func(args []string) (string, string, int) {
		var out, errs bytes.Buffer
		a := newApp(context.Background(), strings.NewReader(""), &out, &errs)
		root := rootFor(a, args)
		if n := len(root.Commands()); namedVerb(args) != "" && isVerb(namedVerb(args)) && n != 1 {
			t.Errorf("%q: the root has %d commands, want only the one named", args, n)
		}
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(&errs)
		err := root.Execute()
		code := cmdutil.ExitOK
		if err != nil {
			code = -1
			errs.WriteString("error: " + err.Error())
		}
		return out.String(), errs.String(), code
	}
	var runs [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(append([]string{}, path...), sub.Name())
			runs = append(runs, append(append([]string{}, p...), "--help"))
			walk(sub, p)
		}
	}
	walk(rootCmd(newApp(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{})), nil)
	if len(runs) < 40 {
		t.Fatalf("only %d commands in the tree", len(runs))
	}
	runs = append(runs, []string{"--help"}, []string{"help", "reg"}, []string{"statu"}, []string{"version", "--nosuch"},
		[]string{"version"}, []string{"-o", "json", "version"}, []string{"version", "extra"}, []string{"reg", "gett"},
		[]string{"-o", "json", "prm", "--help"}, []string{"completion", "bash"})
	for _, args := range runs {
		wo, we, wc := whole(args)
		lo, le, lc := lazy(args)
		if d := cmp.Diff(wo, lo); d != "" {
			t.Errorf("cxray %s: standard output differs (-whole +lazy):\n%s", strings.Join(args, " "), d)
		}
		if d := cmp.Diff(we, le); d != "" {
			t.Errorf("cxray %s: standard error differs (-whole +lazy):\n%s", strings.Join(args, " "), d)
		}
		if wc != lc {
			t.Errorf("cxray %s: exit %d whole, %d lazy", strings.Join(args, " "), wc, lc)
		}
	}
}

func isVerb(name string) bool {
	for _, v := range verbs {
		if v.name == name {
			return true
		}
	}
	return false
}

// FuzzNamedVerb: whatever the arguments, the verb rootFor builds alone is
// the one cobra finds in the whole tree for them, and it is one of the
// arguments, past only the root's own flags and their values.
func FuzzNamedVerb(f *testing.F) {
	for _, s := range []string{"version", "-o json version", "-ojson reg get PAOS", "--adb x.adb prm show", "help reg",
		"--output=json link -d emu", "-o", "-- version", "-d emu status", "--adb=builtin -o json fw query", "emu run -- true"} {
		f.Add(s)
	}
	whole := rootCmd(newApp(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{}))
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		name := namedVerb(args)
		if name == "" || !isVerb(name) {
			return // the whole tree
		}
		i := 0
		for ; i < len(args) && args[i] != name; i++ {
			if !strings.HasPrefix(args[i], "-") && (i == 0 || (args[i-1] != "-o" && args[i-1] != "--output" && args[i-1] != "--adb")) {
				t.Fatalf("namedVerb(%q) = %q, past the plain argument %q", args, name, args[i])
			}
		}
		if i == len(args) {
			t.Fatalf("namedVerb(%q) = %q, not one of the arguments", args, name)
		}
		c, _, err := whole.Find(args)
		if err != nil {
			return // cobra's own error, from either tree
		}
		for c.HasParent() && c.Parent() != whole {
			c = c.Parent()
		}
		if c.Name() != name {
			t.Errorf("args %q: rootFor builds %q alone, cobra runs %q", args, name, c.Name())
		}
	})
}
