// Counts in words, as the console writes them everywhere: every digit
// ("12,400"), and with their noun ("1 job", "3 jobs").

/** exact writes a count with every digit, grouped: 12,400 (num in components/ui.tsx shortens it to 12.4k). */
export const exact = (n: number): string => n.toLocaleString("en-US");

/** plural is the noun for n things: one for 1, else many (one + "s" unless given). */
export const plural = (n: number, one: string, many = one + "s"): string => (n === 1 ? one : many);

/** counted writes n with its noun: "1 queue", "1,200 queues". */
export const counted = (n: number, one: string, many?: string): string => exact(n) + " " + plural(n, one, many);
