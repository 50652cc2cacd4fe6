/** The schema the test template is migrated into. */
export const TEST_SCHEMA = 'adops';
