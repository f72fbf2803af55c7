package ifc

import (
	"errors"
	"fmt"
)

// Array sizes are C integer constant expressions. The header writes most as
// literals, but some use object-like macros (MLX5_CMD_SET_MONITOR_NUM_COUNTER
// is a sum of two others), so a small evaluator handles + - * / % << >> and
// parentheses over literals and macros.

// maxValue bounds every intermediate value so that arithmetic cannot
// overflow an int64.
const maxValue = 1 << 40

// maxExpand bounds macro expansion depth (a macro defined in terms of
// itself would otherwise recurse forever).
const maxExpand = 16

type evaluator struct {
	p     *parser
	toks  []token
	pos   int
	depth int
}

// eval evaluates an array-size expression to a non-negative count.
func (p *parser) eval(toks []token) (int, error) {
	if len(toks) == 0 {
		return 0, errors.New("empty")
	}
	v, err := p.evalDepth(toks, 0)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("%d is negative", v)
	}
	if v > maxBits {
		return 0, fmt.Errorf("%d is larger than %d", v, maxBits)
	}
	return int(v), nil
}

func (p *parser) evalDepth(toks []token, depth int) (int64, error) {
	if depth > maxExpand {
		return 0, errors.New("macros expand too deep (a macro defined in terms of itself?)")
	}
	// Macros that use other macros several times grow exponentially; a
	// budget keeps hostile input from running for ever.
	p.evals += len(toks)
	if p.evals > maxEval {
		return 0, errors.New("array-size expressions are too large to evaluate")
	}
	e := &evaluator{p: p, toks: toks, depth: depth}
	v, err := e.shift()
	if err != nil {
		return 0, err
	}
	if e.pos != len(e.toks) {
		return 0, fmt.Errorf("unexpected %q", e.toks[e.pos].text)
	}
	return v, nil
}

func (e *evaluator) peek(i int) string {
	if e.pos+i < len(e.toks) {
		return e.toks[e.pos+i].text
	}
	return ""
}

func (e *evaluator) shift() (int64, error) {
	v, err := e.add()
	if err != nil {
		return 0, err
	}
	for {
		op := e.peek(0) + e.peek(1)
		if op != "<<" && op != ">>" {
			return v, nil
		}
		e.pos += 2
		r, err := e.add()
		if err != nil {
			return 0, err
		}
		if r < 0 || r > 40 {
			return 0, fmt.Errorf("shift by %d is out of range", r)
		}
		if op == "<<" {
			v <<= uint(r)
		} else {
			v >>= uint(r)
		}
		if err := inRange(v); err != nil {
			return 0, err
		}
	}
}

func (e *evaluator) add() (int64, error) {
	v, err := e.mul()
	if err != nil {
		return 0, err
	}
	for op := e.peek(0); op == "+" || op == "-"; op = e.peek(0) {
		e.pos++
		r, err := e.mul()
		if err != nil {
			return 0, err
		}
		if op == "+" {
			v += r
		} else {
			v -= r
		}
		if err := inRange(v); err != nil {
			return 0, err
		}
	}
	return v, nil
}

func (e *evaluator) mul() (int64, error) {
	v, err := e.unary()
	if err != nil {
		return 0, err
	}
	for op := e.peek(0); op == "*" || op == "/" || op == "%"; op = e.peek(0) {
		e.pos++
		r, err := e.unary()
		if err != nil {
			return 0, err
		}
		switch {
		case op == "*":
			v *= r // both operands are within ±2^40, so this cannot overflow
		case r == 0:
			return 0, errors.New("division by zero")
		case op == "/":
			v /= r
		default:
			v %= r
		}
		if err := inRange(v); err != nil {
			return 0, err
		}
	}
	return v, nil
}

func (e *evaluator) unary() (int64, error) {
	switch e.peek(0) {
	case "-":
		e.pos++
		v, err := e.unary()
		return -v, err
	case "+":
		e.pos++
		return e.unary()
	}
	return e.primary()
}

func (e *evaluator) primary() (int64, error) {
	if e.pos >= len(e.toks) {
		return 0, errors.New("expression ends early")
	}
	t := e.toks[e.pos]
	e.pos++
	switch {
	case t.text == "(":
		v, err := e.shift()
		if err != nil {
			return 0, err
		}
		if e.peek(0) != ")" {
			return 0, errors.New("missing ')'")
		}
		e.pos++
		return v, nil
	case t.kind == tNumber:
		return number(t)
	case t.kind == tIdent:
		body, ok := e.p.macros[t.text]
		if !ok {
			return 0, fmt.Errorf("%s is not a number or a #define in this file", t.text)
		}
		toks, _, err := lex(e.p.file, []byte(body), nil)
		if err != nil {
			return 0, fmt.Errorf("macro %s: %v", t.text, err)
		}
		toks = toks[:len(toks)-1] // drop EOF
		v, err := e.p.evalDepth(toks, e.depth+1)
		if err != nil {
			return 0, fmt.Errorf("macro %s: %v", t.text, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("unexpected %q", t.text)
}

func inRange(v int64) error {
	if v > maxValue || v < -maxValue {
		return errors.New("value out of range")
	}
	return nil
}
