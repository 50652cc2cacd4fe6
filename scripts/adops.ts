// Runs the CLI from source (no build): `npx tsx scripts/adops.ts <command> ...`. Tests spawn it too.
import { main } from '../src/cli/main.js';

process.exitCode = await main(process.argv);
