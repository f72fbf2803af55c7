// Package expr parses and evaluates the arithmetic expressions of the NV
// configuration database (dependency, min_val, max_val, rule, temp_vars).
package expr

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Expressions in the database (dependency, min_val, max_val, rule,
// temp_vars) are arithmetic over variables: `$name` is a field of the same
// TLV, `$tlv.name` a field of another TLV (usually a capability TLV read
// from the device), `$_name` a temporary defined by temp_vars. mstconfig
// evaluates them with a floating-point parser, so this one does too:
// division is real division, `^` is a power, comparisons and logic give
// 1 or 0, and `c ? a : b` picks by c != 0. log2, log10, ln, abs, sqrt, min
// and max are the functions.

// Limits on expressions, so a malformed database cannot make the parser
// recurse or loop without bound: the length bounds the number of nodes, and
// the nesting (parentheses, ?:, unary operators, powers) is bounded while
// parsing. Chains of binary operators are parsed in a loop.
const (
	MaxLen       = 4096 // the database refuses longer expressions too (nvconf/model.go)
	maxDepth     = 64
	maxEvalDepth = MaxLen // a tree never has more levels than tokens
)

// Expr is a parsed expression.
type Expr struct {
	src  string
	root *node
	vars []string
}

type nodeKind uint8

const (
	nNum nodeKind = iota
	nVar
	nUnary
	nBinary
	nTernary
	nCall
)

type node struct {
	kind nodeKind
	op   string
	num  float64
	name string
	kids []*node
}

// Error reports a malformed expression with the position.
type Error struct {
	Expr string
	Pos  int
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("expression %q at %d: %s", e.Expr, e.Pos, e.Msg)
}

// ParseExpr parses an expression.
func Parse(s string) (*Expr, error) {
	if len(s) > MaxLen {
		return nil, &Error{Expr: s[:40] + "...", Msg: fmt.Sprintf("longer than %d characters", MaxLen)}
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{src: s, toks: toks}
	root, err := p.ternary(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		return nil, &Error{Expr: s, Pos: t.pos, Msg: fmt.Sprintf("unexpected %q", t.text)}
	}
	e := &Expr{src: s, root: root}
	seen := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n.kind == nVar && !seen[n.name] {
			seen[n.name] = true
			e.vars = append(e.vars, n.name)
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	sort.Strings(e.vars)
	return e, nil
}

// String is the expression as written.
func (e *Expr) String() string { return e.src }

// Vars lists the variables the expression reads (without the $), sorted.
func (e *Expr) Vars() []string { return append([]string(nil), e.vars...) }

// Env gives variables their values.
type Env func(name string) (float64, error)

// Eval evaluates the expression.
func (e *Expr) Eval(env Env) (float64, error) {
	return eval(e.root, env, 0)
}

var errDepth = errors.New("expression nested too deeply")

func eval(n *node, env Env, depth int) (float64, error) {
	if depth > maxEvalDepth {
		return 0, errDepth
	}
	switch n.kind {
	case nNum:
		return n.num, nil
	case nVar:
		if env == nil {
			return 0, fmt.Errorf("no value for $%s", n.name)
		}
		return env(n.name)
	case nUnary:
		x, err := eval(n.kids[0], env, depth+1)
		if err != nil {
			return 0, err
		}
		switch n.op {
		case "-":
			return -x, nil
		case "+":
			return x, nil
		case "!":
			return b2f(x == 0), nil
		}
	case nTernary:
		c, err := eval(n.kids[0], env, depth+1)
		if err != nil {
			return 0, err
		}
		if c != 0 {
			return eval(n.kids[1], env, depth+1)
		}
		return eval(n.kids[2], env, depth+1)
	case nBinary:
		l, err := eval(n.kids[0], env, depth+1)
		if err != nil {
			return 0, err
		}
		// Short-circuit the logic operators, so a guard such as
		// `$cap.valid==0 || $x <= $cap.max` does not need $x when unset.
		switch n.op {
		case "||":
			if l != 0 {
				return 1, nil
			}
		case "&&":
			if l == 0 {
				return 0, nil
			}
		}
		r, err := eval(n.kids[1], env, depth+1)
		if err != nil {
			return 0, err
		}
		return binop(n.op, l, r), nil
	case nCall:
		args := make([]float64, len(n.kids))
		for i, k := range n.kids {
			v, err := eval(k, env, depth+1)
			if err != nil {
				return 0, err
			}
			args[i] = v
		}
		return call(n.name, args), nil
	}
	return 0, fmt.Errorf("bad expression node")
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func binop(op string, l, r float64) float64 {
	switch op {
	case "||":
		return b2f(l != 0 || r != 0)
	case "&&":
		return b2f(l != 0 && r != 0)
	case "|":
		return float64(int64(l) | int64(r))
	case "&":
		return float64(int64(l) & int64(r))
	case "==":
		return b2f(l == r)
	case "!=":
		return b2f(l != r)
	case "<":
		return b2f(l < r)
	case "<=":
		return b2f(l <= r)
	case ">":
		return b2f(l > r)
	case ">=":
		return b2f(l >= r)
	case "+":
		return l + r
	case "-":
		return l - r
	case "*":
		return l * r
	case "/":
		return l / r
	case "%":
		return math.Mod(l, r)
	case "^":
		return math.Pow(l, r)
	}
	return math.NaN()
}

// functions and their argument counts.
var functions = map[string]int{"log2": 1, "log10": 1, "log": 1, "ln": 1, "abs": 1, "sqrt": 1, "min": 2, "max": 2}

func call(name string, a []float64) float64 {
	switch name {
	case "log2":
		return math.Log2(a[0])
	case "log10", "log":
		return math.Log10(a[0])
	case "ln":
		return math.Log(a[0])
	case "abs":
		return math.Abs(a[0])
	case "sqrt":
		return math.Sqrt(a[0])
	case "min":
		return math.Min(a[0], a[1])
	case "max":
		return math.Max(a[0], a[1])
	}
	return math.NaN()
}

// ---- lexer

type token struct {
	kind byte // 'n' number, 'v' variable, 'i' identifier, 'o' operator
	text string
	num  float64
	pos  int
}

var operators = []string{"||", "&&", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "^", "!", "?", ":", "(", ")", ",", "&", "|"}

func isIdent(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

func lex(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '$':
			j := i + 1
			for j < len(s) && (isIdent(s[j], false) || s[j] == '.') {
				j++
			}
			if j == i+1 {
				return nil, &Error{Expr: s, Pos: i, Msg: "$ without a name"}
			}
			out = append(out, token{kind: 'v', text: s[i+1 : j], pos: i})
			i = j
		case c >= '0' && c <= '9' || c == '.':
			j := i
			if c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') {
				j += 2
				for j < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
					j++
				}
			} else {
				for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
					j++
				}
			}
			txt := s[i:j]
			var v float64
			if u, err := strconv.ParseUint(txt, 0, 64); err == nil {
				v = float64(u)
			} else if f, err := strconv.ParseFloat(txt, 64); err == nil && !strings.ContainsAny(txt, "xX") {
				v = f
			} else {
				return nil, &Error{Expr: s, Pos: i, Msg: fmt.Sprintf("%q is not a number", txt)}
			}
			out = append(out, token{kind: 'n', text: txt, num: v, pos: i})
			i = j
		case isIdent(c, true):
			j := i
			for j < len(s) && isIdent(s[j], false) {
				j++
			}
			out = append(out, token{kind: 'i', text: s[i:j], pos: i})
			i = j
		default:
			found := false
			for _, op := range operators {
				if strings.HasPrefix(s[i:], op) {
					out = append(out, token{kind: 'o', text: op, pos: i})
					i += len(op)
					found = true
					break
				}
			}
			if !found {
				return nil, &Error{Expr: s, Pos: i, Msg: fmt.Sprintf("unexpected character %q", c)}
			}
		}
	}
	return out, nil
}

// ---- parser (precedence climbing, lowest first: ?:, ||, &&, | &,
// comparisons, + -, * / %, unary, ^)

type parser struct {
	src  string
	toks []token
	i    int
}

func (p *parser) peek(op string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == 'o' && p.toks[p.i].text == op
}

func (p *parser) errAt(msg string) error {
	pos := len(p.src)
	if p.i < len(p.toks) {
		pos = p.toks[p.i].pos
	}
	return &Error{Expr: p.src, Pos: pos, Msg: msg}
}

func (p *parser) ternary(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errAt("nested too deeply")
	}
	c, err := p.binary(0, depth)
	if err != nil {
		return nil, err
	}
	if !p.peek("?") {
		return c, nil
	}
	p.i++
	a, err := p.ternary(depth + 1)
	if err != nil {
		return nil, err
	}
	if !p.peek(":") {
		return nil, p.errAt("expected : of ?:")
	}
	p.i++
	b, err := p.ternary(depth + 1)
	if err != nil {
		return nil, err
	}
	return &node{kind: nTernary, kids: []*node{c, a, b}}, nil
}

var levels = [][]string{{"||"}, {"&&"}, {"|", "&"}, {"==", "!=", "<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}}

func (p *parser) binary(level, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errAt("nested too deeply")
	}
	if level == len(levels) {
		return p.unary(depth)
	}
	l, err := p.binary(level+1, depth)
	if err != nil {
		return nil, err
	}
	for steps := 0; p.i < len(p.toks) && steps <= len(p.toks); steps++ {
		op := ""
		for _, o := range levels[level] {
			if p.peek(o) {
				op = o
				break
			}
		}
		if op == "" {
			break
		}
		p.i++
		r, err := p.binary(level+1, depth)
		if err != nil {
			return nil, err
		}
		l = &node{kind: nBinary, op: op, kids: []*node{l, r}}
	}
	return l, nil
}

func (p *parser) unary(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errAt("nested too deeply")
	}
	for _, op := range []string{"-", "+", "!"} {
		if p.peek(op) {
			p.i++
			x, err := p.unary(depth + 1)
			if err != nil {
				return nil, err
			}
			return &node{kind: nUnary, op: op, kids: []*node{x}}, nil
		}
	}
	return p.power(depth)
}

// power binds tighter than unary minus (-2^2 is -4) and is right
// associative, as in the parser mstconfig uses.
func (p *parser) power(depth int) (*node, error) {
	base, err := p.primary(depth)
	if err != nil {
		return nil, err
	}
	if !p.peek("^") {
		return base, nil
	}
	p.i++
	exp, err := p.unary(depth + 1)
	if err != nil {
		return nil, err
	}
	return &node{kind: nBinary, op: "^", kids: []*node{base, exp}}, nil
}

func (p *parser) primary(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errAt("nested too deeply")
	}
	if p.i >= len(p.toks) {
		return nil, p.errAt("expression ends too early")
	}
	t := p.toks[p.i]
	switch t.kind {
	case 'n':
		p.i++
		return &node{kind: nNum, num: t.num}, nil
	case 'v':
		p.i++
		return &node{kind: nVar, name: t.text}, nil
	case 'i':
		n, ok := functions[strings.ToLower(t.text)]
		if !ok {
			return nil, p.errAt(fmt.Sprintf("unknown name %q (variables start with $; functions: log2, log10, ln, abs, sqrt, min, max)", t.text))
		}
		p.i++
		if !p.peek("(") {
			return nil, p.errAt(fmt.Sprintf("%s needs (", t.text))
		}
		p.i++
		fn := &node{kind: nCall, name: strings.ToLower(t.text)}
		for {
			a, err := p.ternary(depth + 1)
			if err != nil {
				return nil, err
			}
			fn.kids = append(fn.kids, a)
			if p.peek(",") {
				p.i++
				continue
			}
			break
		}
		if !p.peek(")") {
			return nil, p.errAt(fmt.Sprintf("expected ) closing %s(", t.text))
		}
		p.i++
		if len(fn.kids) != n {
			return nil, p.errAt(fmt.Sprintf("%s takes %d argument(s), got %d", t.text, n, len(fn.kids)))
		}
		return fn, nil
	case 'o':
		if t.text == "(" {
			p.i++
			x, err := p.ternary(depth + 1)
			if err != nil {
				return nil, err
			}
			if !p.peek(")") {
				return nil, p.errAt("expected )")
			}
			p.i++
			return x, nil
		}
	}
	return nil, p.errAt(fmt.Sprintf("unexpected %q", t.text))
}

// TempVar is one temporary of temp_vars: `$_name=expression`.
type TempVar struct {
	Name string // without $
	Expr *Expr
}

// ParseTempVars reads temp_vars: assignments separated by ';'.
func ParseTempVars(s string) ([]TempVar, error) {
	var out []TempVar
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lhs, rhs, ok := strings.Cut(part, "=")
		lhs = strings.TrimSpace(lhs)
		if !ok || !strings.HasPrefix(lhs, "$") || len(lhs) < 2 || strings.HasPrefix(rhs, "=") {
			return nil, &Error{Expr: part, Msg: "a temporary is $name=expression"}
		}
		for i := 1; i < len(lhs); i++ {
			if !isIdent(lhs[i], false) {
				return nil, &Error{Expr: part, Pos: i, Msg: "bad temporary name"}
			}
		}
		e, err := Parse(rhs)
		if err != nil {
			return nil, err
		}
		out = append(out, TempVar{Name: lhs[1:], Expr: e})
	}
	return out, nil
}
