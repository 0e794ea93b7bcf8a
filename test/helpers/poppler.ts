import { execFileSync } from 'node:child_process';

/** Whether a poppler-utils program (`pdftotext`, `pdftoppm`) is on the PATH. */
function has(program: string): boolean {
  try {
    execFileSync(program, ['-v'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // `-v` prints the version and exits with 0 or 99 depending on the poppler version.
    return (error as { status?: number }).status === 99;
  }
}

/**
 * Why the PDF checks cannot run here, or false when they can. Locally a missing poppler-utils skips
 * them with a notice; with CI=true it fails them.
 */
export function popplerSkipReason(): string | false {
  const missing = ['pdftotext', 'pdftoppm'].filter((program) => !has(program));
  if (missing.length === 0) return false;
  const install = 'apt-get install -y poppler-utils';
  if (process.env.CI === 'true') {
    throw new Error(`CI=true but ${missing.join(' and ')} not found (install them: ${install})`);
  }
  return `${missing.join(' and ')} not found (${install}): PDF text and rendering checks skipped`;
}

/** The text of a PDF, as `pdftotext -layout` extracts it. */
export function pdfText(pdf: Buffer): string {
  return execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', '-', '-'], { input: pdf }).toString('utf8');
}

/** Renders every page to `<prefix>-<n>.png` at 100 dpi. */
export function renderPages(pdf: Buffer, prefix: string): void {
  execFileSync('pdftoppm', ['-r', '100', '-png', '-', prefix], { input: pdf });
}
