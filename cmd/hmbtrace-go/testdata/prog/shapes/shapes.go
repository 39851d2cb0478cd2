// Package shapes has methods, on values and pointers, for the test.
package shapes

import "math"

type Square struct{ Side float64 }

// Area is a value method that calls another, so no tiny leaf.
func (s Square) Area() float64 { return math.Pow(s.Side, 2) }

type Circle struct{ R float64 }

func (c *Circle) Area() float64 { return math.Pi * math.Pow(c.R, 2) }

// Perimeter is a tiny leaf: left to the inliner, no probe.
func (s Square) Perimeter() float64 { return 4 * s.Side }
