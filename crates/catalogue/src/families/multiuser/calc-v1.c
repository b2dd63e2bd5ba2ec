/* touchstone multiuser script v1: the small C program each simulated user
 * edits and compiles. It sums a few series and prints them; the script's
 * edit changes SCALE and changes it back. */
#include <stdio.h>
#include <stdlib.h>

#define SCALE 1000

struct series {
    const char *name;
    double (*term)(int);
};

static double harmonic(int k) { return 1.0 / k; }
static double squares(int k) { return 1.0 / ((double)k * k); }
static double alternating(int k) { return (k % 2 ? 1.0 : -1.0) / k; }

static double sum(const struct series *s, int n)
{
    double total = 0.0;
    for (int k = 1; k <= n; k++)
        total += s->term(k);
    return total;
}

int main(int argc, char **argv)
{
    static const struct series all[] = {
        {"harmonic", harmonic},
        {"squares", squares},
        {"alternating", alternating},
    };
    int n = argc > 1 ? atoi(argv[1]) : SCALE;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        printf("%-12s %.9f\n", all[i].name, sum(&all[i], n));
    return 0;
}
