package prm

import (
	"fmt"
	"strconv"
	"strings"
)

// cond is a compiled member condition of a conditional union, such as
// "($(parent).meas_type == cause_list) AND ($(parent).version == prod_5nm)".
type cond struct {
	member int
	text   string
	root   expr
}

type expr interface {
	eval(buf []byte, base int) uint64
}

type refExpr struct{ r *ref }
type constExpr struct{ v uint64 }
type notExpr struct{ x expr }
type binExpr struct {
	op   string
	l, r expr
}

func (e refExpr) eval(buf []byte, base int) uint64 { return getBits(buf, base+e.r.bit, e.r.width) }
func (e constExpr) eval([]byte, int) uint64        { return e.v }
func (e notExpr) eval(buf []byte, base int) uint64 { return b2u(e.x.eval(buf, base) == 0) }
func (e binExpr) eval(buf []byte, base int) uint64 {
	l := e.l.eval(buf, base)
	switch e.op {
	case "&&":
		return b2u(l != 0 && e.r.eval(buf, base) != 0)
	case "||":
		return b2u(l != 0 || e.r.eval(buf, base) != 0)
	}
	r := e.r.eval(buf, base)
	switch e.op {
	case "==":
		return b2u(l == r)
	case "!=":
		return b2u(l != r)
	case "<":
		return b2u(l < r)
	case "<=":
		return b2u(l <= r)
	case ">":
		return b2u(l > r)
	case ">=":
		return b2u(l >= r)
	}
	return 0
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// parseCond compiles a condition; resolve maps a $(parent) path to its bits.
func parseCond(s string, resolve func(string) (*ref, error)) (cond, error) {
	p := &condParser{toks: balance(tokenizeCond(s)), resolve: resolve}
	e, err := p.or()
	if err != nil {
		return cond{}, err
	}
	if p.i < len(p.toks) {
		return cond{}, fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	return cond{text: strings.Join(strings.Fields(strings.ReplaceAll(s, "$(parent).", "")), " "), root: e}, nil
}

func tokenizeCond(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.HasPrefix(s[i:], "$(parent).") || strings.HasPrefix(s[i:], "#(parent)."):
			j := i + len("$(parent).")
			for j < len(s) && (isWord(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case isWord(c):
			j := i
			for j < len(s) && (isWord(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch two {
			case "==", "!=", "<=", ">=", "&&", "||":
				toks = append(toks, two)
				i += 2
				continue
			}
			toks = append(toks, string(c))
			i++
		}
	}
	return toks
}

// balance mends the unbalanced parentheses that real databases contain
// (Rev 0.59 and 0.61 SLRG conditions): missing closers are added at the end,
// surplus closers at the end are dropped.
func balance(toks []string) []string {
	depth := 0
	for _, t := range toks {
		switch t {
		case "(":
			depth++
		case ")":
			depth--
		}
	}
	for depth < 0 && len(toks) > 0 && toks[len(toks)-1] == ")" {
		toks = toks[:len(toks)-1]
		depth++
	}
	for ; depth > 0; depth-- {
		toks = append(toks, ")")
	}
	return toks
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

type condParser struct {
	toks    []string
	i       int
	resolve func(string) (*ref, error)
}

func (p *condParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *condParser) or() (expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		switch strings.ToUpper(p.peek()) {
		case "|", "||", "OR":
			p.i++
			r, err := p.and()
			if err != nil {
				return nil, err
			}
			l = binExpr{"||", l, r}
		default:
			return l, nil
		}
	}
}

func (p *condParser) and() (expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		switch strings.ToUpper(p.peek()) {
		case "&", "&&", "AND":
			p.i++
			r, err := p.unary()
			if err != nil {
				return nil, err
			}
			l = binExpr{"&&", l, r}
		default:
			return l, nil
		}
	}
}

func (p *condParser) unary() (expr, error) {
	if p.peek() == "!" {
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notExpr{x}, nil
	}
	if p.peek() == "(" {
		p.i++
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.i++
		return x, nil
	}
	return p.compare()
}

// operand is either resolved (a path or number) or a bare name, which is
// resolved against the enum of the other side of the comparison.
type operand struct {
	e    expr
	r    *ref
	name string
}

func (p *condParser) operand() (operand, error) {
	t := p.peek()
	if t == "" {
		return operand{}, fmt.Errorf("expression ends early")
	}
	p.i++
	if strings.HasPrefix(t, "$(parent).") || strings.HasPrefix(t, "#(parent).") {
		r, err := p.resolve(t)
		if err != nil {
			return operand{}, err
		}
		return operand{e: refExpr{r}, r: r}, nil
	}
	if v, err := strconv.ParseUint(t, 0, 64); err == nil {
		return operand{e: constExpr{v}}, nil
	}
	if isWord(t[0]) {
		return operand{name: t}, nil
	}
	return operand{}, fmt.Errorf("unexpected %q", t)
}

func (p *condParser) compare() (expr, error) {
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	switch op {
	case "==", "!=", "<", "<=", ">", ">=", "=":
		p.i++
	default:
		if l.e == nil {
			return nil, fmt.Errorf("bare name %q is not a condition", l.name)
		}
		return l.e, nil
	}
	if op == "=" {
		op = "=="
	}
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	if l.e, err = bindName(l, r); err != nil {
		return nil, err
	}
	if r.e, err = bindName(r, l); err != nil {
		return nil, err
	}
	return binExpr{op, l.e, r.e}, nil
}

func bindName(o, other operand) (expr, error) {
	if o.e != nil {
		return o.e, nil
	}
	if other.r == nil || other.r.field == nil {
		return nil, fmt.Errorf("name %q is compared with something that has no enum", o.name)
	}
	v, ok := other.r.field.EnumValueOf(o.name)
	if !ok {
		return nil, fmt.Errorf("%q is not a value of %s", o.name, other.r.field.Name)
	}
	return constExpr{v}, nil
}
