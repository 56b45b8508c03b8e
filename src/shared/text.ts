/** Printable: at least one character and no control character (Unicode category Cc). */
export const isPrintable = (s: string): boolean => PRINTABLE.test(s);

const PRINTABLE = /^[^\p{Cc}]+$/u;
