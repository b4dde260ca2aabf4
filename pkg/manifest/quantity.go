package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Quantity is a resource amount as a manifest writes it: a decimal string,
// cores for cpu and MB for memory (seed 000: "1 is one core", "memory in
// M"), or "-1" for unlimited. The empty string is "not given".
type Quantity string

// Unlimited is the Quantity seed 000 uses for "no limit".
const Unlimited Quantity = "-1"

// maxQuantityDigits bounds the integer part so Milli cannot overflow.
const maxQuantityDigits = 12

// Amount is a parsed Quantity.
type Amount struct {
	// Milli is the amount in thousandths of the unit: "0.5" cpu is 500.
	Milli int64
	// Unlimited is set by "-1".
	Unlimited bool
	// Set is false for an empty Quantity.
	Set bool
}

// Value returns the amount in whole units (cores, MB); -1 when unlimited.
func (a Amount) Value() float64 {
	if a.Unlimited {
		return -1
	}
	return float64(a.Milli) / 1000
}

// Parse reads q: digits with at most three decimals ("2", "0.5", "0.125"),
// or "-1".
func (q Quantity) Parse() (Amount, error) {
	s := string(q)
	switch {
	case s == "":
		return Amount{}, nil
	case q == Unlimited:
		return Amount{Unlimited: true, Set: true}, nil
	case strings.HasPrefix(s, "-"):
		return Amount{}, fmt.Errorf("must be ≥ 0, or -1 for unlimited, got %q", s)
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasFrac && (frac == "" || !allDigits(frac))) {
		return Amount{}, fmt.Errorf("want a decimal number such as \"2\" or \"0.5\", or \"-1\" for unlimited, got %q", s)
	}
	if len(frac) > 3 {
		return Amount{}, fmt.Errorf("at most 3 decimal places, got %q", s)
	}
	if len(strings.TrimLeft(whole, "0")) > maxQuantityDigits {
		return Amount{}, fmt.Errorf("too large, got %q", s)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
	return Amount{Milli: w*1000 + f, Set: true}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
