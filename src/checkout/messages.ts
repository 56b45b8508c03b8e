import de from './messages/de.json';
import en from './messages/en.json';

export type MessageKey = keyof typeof en;
export type Messages = Record<MessageKey, string>;

/** The languages the payment page ships, English first (the default). */
const SHIPPED: Record<string, Messages> = { en, de };
export const LANGUAGES = Object.keys(SHIPPED);

/** Whether `lang` names a shipped language (own keys only: `constructor` or `__proto__` is no language). */
const shipped = (lang: string): boolean => Object.hasOwn(SHIPPED, lang);

/** `?lang=` when it names a shipped language, else the first shipped one of Accept-Language (by q), else English. */
export function pickLanguage(query: unknown, acceptLanguage: string): string {
  if (typeof query === 'string' && shipped(query)) return query;
  const asked = acceptLanguage
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { lang: tag.trim().toLowerCase().split('-')[0] ?? '', q: q ? Number(q.slice(2)) : 1 };
    })
    .filter((a) => a.q > 0 && shipped(a.lang))
    .sort((a, b) => b.q - a.q);
  return asked[0]?.lang ?? 'en';
}

export const messagesOf = (lang: string): Messages => (shipped(lang) ? SHIPPED[lang]! : en);

/** A message with its `{name}` slots filled. */
export const fill = (template: string, values: Record<string, string>): string => template.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? '');
