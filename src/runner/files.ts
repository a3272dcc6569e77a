export { writeFileAtomic } from "../rundir/files.js";
