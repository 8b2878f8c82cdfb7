package tune

// stateVersionTune is the state file version that adds a steering
// step's NAPI settings (savedStep.NAPI, "napi"): a state of an older
// version holding one is refused, as an irqnuma that cannot restore them
// would refuse the file by its version.
const stateVersionTune = 4
