/** The names a report and a manifest carry to say which contract they follow. */
export const REPORT_SCHEMA = "provael.report/1";
export const PROTOCOL = "provael-redteam/v2";
