/**
 * The API emulator: a local, spec-faithful stand-in for the ad server's management API with
 * deterministic report data and fault injection. See docs/emulator.md.
 */
export { startEmulator } from './server.js';
export { DEMO_KEY, loadKeysFile, parseKeysFile } from './auth.js';
export { parseLatency } from './faults.js';
export { describeQuirks, optionsOfFlags, type FaultAndQuirkFlags } from './flags.js';
export { PROFILES, PROFILE_NAMES, isProfileName, resolveProfile, type Profile } from './profiles.js';
export {
  BOOLEAN_QUIRKS,
  ECHO_FORMS,
  ECHO_PLACES,
  FAITHFUL_QUIRKS,
  parseEchoPlaces,
  parseQuirkList,
  resolveQuirks,
  type Quirks,
} from './quirks.js';
export { ECHO_FIELD, ECHO_HEADER } from './echo.js';
export { MAX_LIMIT } from './api/paging.js';
export { MAX_REPORT_DAYS } from './api/report-input.js';
export { generateCatalogue, type Catalogue } from './catalogue.js';
export type { Campaign, Creative, Zone } from './entities.js';
export type {
  EchoForm,
  EchoPlace,
  EmulatorKey,
  EmulatorOptions,
  EmulatorQuirks,
  EmulatorStats,
  FaultKind,
  FaultOptions,
  OverrideOptions,
  ProfileName,
  ReportParamsForm,
  RequestLogEntry,
  RunningEmulator,
  Scope,
} from './types.js';
