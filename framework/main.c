/* main.c -- the program; everything else is in the sscore library (cli.c: ss_main). */
#include "ss_framework.h"

int main(int argc, char **argv)
{
    return ss_main(argc, argv);
}
