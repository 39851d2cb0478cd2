package tempfile

const unnamedExpected = true
