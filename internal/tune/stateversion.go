package tune

// stateVersionTune is the state file version that adds a pin's
// irqbalance ban (pinState.Irqbalance, irqbalance.go): written only by a
// pin that banned IRQs from irqbalance, so an irqnuma that cannot take
// the ban back out refuses the file by its version.
const stateVersionTune = 4
