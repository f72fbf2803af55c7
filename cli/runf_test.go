package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// verbShape is how one verb's cobra wiring is built, found in the syntax:
// whether the function that returns the command takes a runF hook and the
// closure calls it, and whether the closure hands the run function a
// context (cli/cli's shape: newXCmd(runF) and runX(ctx, opts)).
type verbShape struct{ hook, ctx bool }

func verbShapes(t *testing.T) map[string]verbShape {
	t.Helper()
	files, err := filepath.Glob("internal/*cmd/*.go")
	if err != nil || len(files) < 20 {
		t.Fatalf("found %d verb files under internal/*cmd (%v)", len(files), err)
	}
	out := map[string]verbShape{}
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
			hookParam := false
			for _, p := range fd.Type.Params.List {
				for _, n := range p.Names {
					if _, isFunc := p.Type.(*ast.FuncType); isFunc && n.Name == "runF" {
						hookParam = true
					}
				}
			}
			n := 0
			ast.Inspect(fd.Body, func(node ast.Node) bool {
				lit := runLiteral(node)
				if lit == nil {
					return true
				}
				key := name + ":" + fd.Name.Name
				if n++; n > 1 {
					key += "#" + string(rune('0'+n))
				}
				s := verbShape{}
				ast.Inspect(lit.Body, func(m ast.Node) bool {
					call, ok := m.(*ast.CallExpr)
					if !ok {
						return true
					}
					if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "runF" && hookParam {
						s.hook = true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "run") && len(call.Args) > 0 && isContext(call.Args[0]) {
						s.ctx = true
					}
					return true
				})
				out[key] = s
				return true
			})
		}
	}
	return out
}

// isContext says an argument is spelt as a context: ctx, a.Ctx,
// cmd.Context().
func isContext(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "ctx"
	case *ast.SelectorExpr:
		return x.Sel.Name == "Ctx"
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			return sel.Sel.Name == "Context"
		}
	}
	return false
}

// Every verb takes a runF hook, so a test can see the options its flags
// make without a device, and hands its run function the context.
func TestVerbsHaveRunFHooks(t *testing.T) {
	got := verbShapes(t)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := got[k]
		if !s.hook {
			t.Errorf("%s: the verb has no runF hook: build it in newXCmd(runF func(*xOptions, []string) error) and call runF from the closure", k)
		}
		if !s.ctx {
			t.Errorf("%s: the closure does not hand its run function a context: runX(ctx, opts)", k)
		}
	}
	if len(got) < 50 { // 52 verbs when this was written
		t.Errorf("found %d verbs; the walk over cli/internal/*cmd missed some", len(got))
	}
}
