package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxClosure is the longest a verb's Run or RunE closure may be, in lines
// between its braces: cobra's closure only hands the flags to the verb's
// run function (cli/cli's shape: an options struct, a run function, a
// runF hook for tests).
const maxClosure = 15

// longClosures are the closures not yet moved out, by file and function,
// with their length when this list was written: it may only shrink, and
// a closure on it may not grow.
var longClosures = map[string]int{}

// runClosures finds every Run/RunE function literal in the verbs'
// packages (cli/internal/*cmd) and returns its length in lines, by
// "package/file.go:function" (with "#N" for the N-th in one function).
func runClosures(t *testing.T) map[string]int {
	t.Helper()
	files, err := filepath.Glob("internal/*cmd/*.go")
	if err != nil || len(files) < 20 {
		t.Fatalf("found %d verb files under internal/*cmd (%v)", len(files), err)
	}
	out := map[string]int{}
	fset := token.NewFileSet()
	for _, fn := range files {
		if strings.HasSuffix(fn, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, fn, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(fn), "internal/")
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := 0
			ast.Inspect(fd.Body, func(node ast.Node) bool {
				lit := runLiteral(node)
				if lit == nil {
					return true
				}
				key := name + ":" + fd.Name.Name
				if n++; n > 1 {
					key += fmt.Sprintf("#%d", n)
				}
				out[key] = max(0, fset.Position(lit.Body.Rbrace).Line-fset.Position(lit.Body.Lbrace).Line-1)
				return true
			})
		}
	}
	return out
}

// runLiteral is the function literal node gives cobra's Run or RunE, in
// a cobra.Command literal (RunE: func...) or an assignment (c.RunE = func...).
func runLiteral(node ast.Node) *ast.FuncLit {
	var key string
	var val ast.Expr
	switch n := node.(type) {
	case *ast.KeyValueExpr:
		if id, ok := n.Key.(*ast.Ident); ok {
			key, val = id.Name, n.Value
		}
	case *ast.AssignStmt:
		if len(n.Lhs) == 1 && len(n.Rhs) == 1 {
			if sel, ok := n.Lhs[0].(*ast.SelectorExpr); ok {
				key, val = sel.Sel.Name, n.Rhs[0]
			}
		}
	}
	if key != "RunE" && key != "Run" {
		return nil
	}
	lit, _ := val.(*ast.FuncLit)
	return lit
}

// Every verb's closure is short: the work is in its run function, where
// a test can call it with options and no argv.
func TestVerbClosuresAreShort(t *testing.T) {
	got := runClosures(t)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := got[k]
		limit, listed := longClosures[k]
		switch {
		case listed && n <= maxClosure:
			t.Errorf("%s: the closure is %d lines now; take it off longClosures", k, n)
		case listed && n > limit:
			t.Errorf("%s: the closure grew to %d lines (listed at %d); move the work into the verb's run function", k, n, limit)
		case !listed && n > maxClosure:
			t.Errorf("%s: the closure is %d lines (at most %d): move the work into the verb's run function with an options struct", k, n, maxClosure)
		}
	}
	for k := range longClosures {
		if _, ok := got[k]; !ok {
			t.Errorf("%s is on longClosures but has no Run/RunE closure; take it off", k)
		}
	}
}
