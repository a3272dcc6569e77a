/**
 * `<task>.calibration.json`, written by `provael calibrate`: its schema is owned by the judge
 * that fits it (judges/calibrate.ts) and named here with the other run-directory files.
 */
export { type Calibration as CalibrationFile, calibrationSchema } from "../../judges/calibrate.js";
