package main

// The module that uses hmbtrace-go as a tool (go get -tool) keeps auto and
// its dependencies in its go.mod and go.sum through this import, although
// none of its own files imports them: the instrumented code needs them.
import _ "github.com/hmbtrace/hmbtrace/measure/auto"
